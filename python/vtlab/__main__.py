"""``python -m vtlab`` runs the command line (same as the ``vtlab`` script)."""

from vtlab.cli import main

if __name__ == "__main__":
    main()
