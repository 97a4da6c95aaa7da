"""Paper 003 (MSA) as a subpackage; the module moves to msa/problem.py first,
then splits by responsibility."""
from .problem import *  # noqa: F401,F403
from .problem import __all__, __doc__  # noqa: F401
