"""Doc."""
import os
from . import x as y

@dec
class A(B, metaclass=M):
    """A."""
    z = 1
    def m(self, a: int = 1) -> str:
        return self.n(a)

async def f(*a, **k):
    raise ValueError(a)
