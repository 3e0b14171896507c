"""Allow ``python -m generator`` as a synonym of the ``dualboard`` command."""

from generator.cli import main

main(prog_name="dualboard")
