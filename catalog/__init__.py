"""What can be rented and what it costs: accelerators, instance types and priced offers.

``import catalog`` reads nothing; ``load_catalog()`` reads the active catalog on first use.

    load_catalog, Catalog          the active (or a named) catalog; Catalog.info() for a summary
    select_offers, OfferRow        filtered, sorted, joined views (flagged offers on request)
    why_no_offers                  why no offer matches a set of filters (`offers`' note and
                                   the planner's error); unmatched_pricing: why some pricing
                                   models asked have none (the planner's note)
    accelerator_summaries          one row per accelerator with its cheapest usable price
    Offer, InstanceType, Accelerator, CLOUDS, PRICING_MODELS, OFFER_FLAGS   the data model
                                   (split_flags: the flags that keep a price out of plans,
                                   and those that only inform)
    canonical_pricing              'On-Demand' → 'on_demand' (the catalog's spelling)
    parse_overrides, load_overrides, Overrides   negotiated discounts and private rates
    refresh_catalog, use_catalog, catalog_status, stored_catalogs   catalogs on disk
    record                         the frozen, slotted dataclass every typed record is (built
                                   without compiling its equality, hash and repr)
    write_snapshot                 the packaged snapshot, from the shared reference (developers)
    data_dir                       where gpuplan keeps per-user state
    read_cached, write_cached      small derived results kept in the per-user cache (keyed,
                                   checked, plain data only; the planner's model evaluations)
    read_user_text, decode_user_bytes, load_yaml_text, load_json_text, read_json_file,
    check_output_path, write_bytes_atomic, write_text_atomic   safe reading and writing of
                                   the user's files (input_clash: an output that is one of
                                   the command's inputs); make_directory for gpuplan's own
                                   (check_directory_place: the same check for a reader);
                                   shell_word: a path as one word of a command to paste;
                                   install_hint: how to install an extra (from the checkout)
    GpuplanError, UnknownNameError, close_matches   errors (with the input's ``field``), and
                                   the one "did you mean"; check_names: a list of names
                                   checked against the known ones; without_fix: a message,
                                   its fix cut
"""

from ._aliases import check_names
from ._anomalies import ANOMALY_FLAGS, CEILING_USD_PER_GPU_HOUR, OUTLIER_Z
from ._clouds import (
    AWS_ADVISOR_BUCKETS,
    CLOUDS,
    HOURS_PER_MONTH,
    REGION_KINDS,
    Cloud,
    aws_bucket_rate,
    install_hint,
)
from ._errors import (
    AmbiguousNameError,
    CatalogError,
    CatalogFileError,
    CatalogNotice,
    GpuplanError,
    OverrideError,
    UnknownNameError,
    close_matches,
    quoted,
    without_fix,
)
from ._files import (
    MAX_USER_FILE_BYTES,
    decode_user_bytes,
    load_json_text,
    number_in_file,
    read_json_file,
    read_user_text,
    shown_as_yaml,
    shown_number,
    unquoted_hint,
    whole_number_in_file,
)
from ._load import (
    STALE_AFTER_DAYS,
    Catalog,
    active_catalog_name,
    data_dir,
    load_catalog,
)
from ._meta import dates_of, price_dates
from ._paths import in_catalog_folders
from ._record import record
from ._records import (
    DTYPES,
    FABRICS,
    INFORMATIONAL_FLAGS,
    MAX_GPU_MEMORY_GIB,
    OFFER_FLAGS,
    OFFERING_CLASSES,
    PRICE_UNUSABLE_FLAGS,
    PRICING_MODELS,
    PRICING_TERM_HOURS,
    TOPOLOGIES,
    UPFRONT_OPTIONS,
    Accelerator,
    InstanceType,
    Offer,
    canonical_pricing,
    split_flags,
)
from ._today import MAX_YEAR, MIN_YEAR, TODAY_ENV, today_utc
from ._writes import (
    STALE_TEMP_SECONDS,
    check_directory_place,
    check_output_path,
    input_clash,
    make_directory,
    shell_word,
    write_bytes_atomic,
    write_text_atomic,
)

# Catalogs on disk, the snapshot builder and the YAML loader (PyYAML) load on first use:
# planning never needs them (~25 ms of imports per command); nor does `estimate` need the
# queries over offers or the price overrides (their records cost ~4 ms to define). `from
# catalog import refresh_catalog` works the same (PEP 562).
_LAZY = {"RefreshResult": "_refresh", "catalog_status": "_refresh",
         "refresh_catalog": "_refresh", "use_catalog": "_refresh",
         "write_snapshot": "_snapshot", "StoredCatalog": "_store", "stored_catalogs": "_store",
         "load_yaml_text": "_yaml",
         "Overrides": "_overrides", "load_overrides": "_overrides",
         "parse_overrides": "_overrides",
         "SORT_KEYS": "_query", "MAX_MIN_GPUS": "_query", "AcceleratorSummary": "_query",
         "OfferRow": "_query",
         "accelerator_summaries": "_query", "select_offers": "_query",
         "absent_pricing": "_query", "why_no_offers": "_no_offers",
         "unmatched_pricing": "_no_offers",
         "read_cached": "_blobs", "write_cached": "_blobs"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'catalog' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ANOMALY_FLAGS", "AWS_ADVISOR_BUCKETS", "CEILING_USD_PER_GPU_HOUR", "CLOUDS", "DTYPES",
    "FABRICS", "HOURS_PER_MONTH", "INFORMATIONAL_FLAGS", "MAX_GPU_MEMORY_GIB", "MAX_MIN_GPUS",
    "OFFERING_CLASSES",
    "OFFER_FLAGS", "OUTLIER_Z", "PRICE_UNUSABLE_FLAGS", "PRICING_MODELS", "PRICING_TERM_HOURS",
    "REGION_KINDS", "SORT_KEYS", "MAX_USER_FILE_BYTES", "STALE_AFTER_DAYS", "STALE_TEMP_SECONDS",
    "TODAY_ENV",
    "MIN_YEAR", "MAX_YEAR",
    "TOPOLOGIES",
    "UPFRONT_OPTIONS", "Accelerator", "AcceleratorSummary", "AmbiguousNameError", "Catalog",
    "CatalogError",
    "CatalogFileError", "CatalogNotice", "Cloud", "GpuplanError", "InstanceType", "Offer",
    "OfferRow", "OverrideError", "Overrides", "RefreshResult", "StoredCatalog", "UnknownNameError",
    "absent_pricing", "accelerator_summaries", "active_catalog_name", "aws_bucket_rate",
    "canonical_pricing",
    "catalog_status", "check_directory_place", "check_names", "check_output_path",
    "close_matches", "data_dir", "in_catalog_folders", "install_hint",
    "decode_user_bytes", "input_clash", "load_catalog", "load_json_text", "load_overrides",
    "load_yaml_text",
    "make_directory", "parse_overrides", "quoted", "read_cached", "read_json_file",
    "read_user_text", "record", "shown_as_yaml", "shown_number", "split_flags",
    "refresh_catalog",
    "select_offers", "shell_word", "stored_catalogs", "today_utc", "unmatched_pricing",
    "unquoted_hint",
    "use_catalog", "why_no_offers",
    "number_in_file", "price_dates", "dates_of", "whole_number_in_file",
    "without_fix", "write_bytes_atomic", "write_cached", "write_snapshot", "write_text_atomic",
]
