"""What can be rented and what it costs: accelerators, instance types and priced offers.

``import catalog`` reads nothing; ``load_catalog()`` reads the active catalog on first use.
"""

from ._csvio import write_bytes_atomic, write_text_atomic
from ._errors import (
    CatalogError,
    CatalogFileError,
    GpuplanError,
    OverrideError,
    UnknownNameError,
)
from ._load import STALE_AFTER_DAYS, Catalog, active_catalog_name, load_catalog
from ._query import (
    SORT_KEYS,
    AcceleratorSummary,
    OfferRow,
    accelerator_summaries,
    select_offers,
)
from ._records import (
    CLOUDS,
    DTYPES,
    FABRICS,
    OFFER_FLAGS,
    PRICING_MODELS,
    TOPOLOGIES,
    Accelerator,
    InstanceType,
    Offer,
)

__all__ = [
    "CLOUDS", "DTYPES", "FABRICS", "OFFER_FLAGS", "PRICING_MODELS", "SORT_KEYS",
    "STALE_AFTER_DAYS", "TOPOLOGIES", "Accelerator", "AcceleratorSummary", "Catalog",
    "CatalogError", "CatalogFileError", "GpuplanError", "InstanceType", "Offer", "OfferRow",
    "OverrideError", "UnknownNameError", "accelerator_summaries", "active_catalog_name",
    "load_catalog", "select_offers", "write_bytes_atomic", "write_text_atomic",
]
