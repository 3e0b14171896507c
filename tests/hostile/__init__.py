"""The hostile-input corpus: every way a pull request has been seen to attack the build.

Each module here takes one kind of attack (links, regex bombs, colliding ids,
a wedged store, NaN, a bot that posts attacker text, oversized files, …) and
checks what must hold instead. CI runs it with the rest of the suite.
"""
