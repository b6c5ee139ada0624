"""`python play.py ...` in a checkout: a person plays against the bots, at a terminal or in a web page.

The code is `euchre_lab/play.py` (installed as the command `euchre-play`); `import play` gives that module.
"""

import sys

import euchre_lab.play as _tool

if __name__ == "__main__":
    sys.exit(_tool.main())
sys.modules[__name__] = _tool
