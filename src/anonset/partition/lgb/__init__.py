"""Paper 002 (LGB) as a subpackage; the module moves to lgb/core.py first,
then splits by responsibility."""
from .core import *  # noqa: F401,F403
from .core import __all__, __doc__  # noqa: F401
from .core import _contiguous, _encode, _make_domain  # noqa: F401
