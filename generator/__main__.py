"""Allow ``python -m dualboard`` as a synonym of the ``dualboard`` command."""

from dualboard.cli import main

main(prog_name="dualboard")
