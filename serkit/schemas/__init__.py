"""Schemas: a record type derived from a document (GenSON's inference), pinned by its hash."""
