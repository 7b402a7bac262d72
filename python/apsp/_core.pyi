# Type stub of the compiled extension module (cpp/module.cpp): the constants the public API
# re-exports are typed; the engines' entry points are internal and left as Any.
from typing import Any

INT32_INF: int
INT64_INF: int
NO_PREDECESSOR: int
DEVICE_DTYPES: tuple[str, ...]

def __getattr__(name: str) -> Any: ...
