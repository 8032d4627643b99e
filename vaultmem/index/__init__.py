"""The search index: embedders and their runtimes, chunking, the Lance table, ingest of
changed notes, the person's own notes, and the state kept beside them.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "as_list": "chunking",
    "as_text": "chunking",
    "is_assistant": "chunking",
    "embedder_for": "embed",
    "Indexer": "ingest",
    "chunks_of": "ingest",
    "memory_readings": "readings",
    "FILTER_COLUMNS": "snapshot",
    "NARROWING_COLUMNS": "snapshot",
    "SNAPSHOT_COLUMNS": "snapshot",
    "Snapshot": "snapshot",
    "column_array": "snapshot",
    "of_rows": "snapshot",
    "State": "state",
    "ANN_AFTER_ROWS": "table",
    "ChunkIndex": "table",
    "sql_in": "table",
    "sql_str": "table",
    "NOTE_TYPE": "user_notes",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
