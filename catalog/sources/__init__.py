"""One source per cloud, each turning that cloud's public price lists or APIs into records.

Nothing heavy is imported with this package: the sources (and the HTTP client and cloud SDKs
they use) load on first use, so ``import catalog`` stays fast. ``catalog._refresh`` drives them.
"""

from __future__ import annotations

from importlib import import_module

from ._common import CloudData, Progress, RefreshError, Source, SourceUnavailable

_LAZY = {"AwsSource": ".aws", "AzureSource": ".azure", "GcpSource": ".gcp",
         "RETAIL_PRICES_URL": ".azure"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RETAIL_PRICES_URL", "AwsSource", "AzureSource", "CloudData", "GcpSource", "Progress",
           "RefreshError", "Source", "SourceUnavailable"]
