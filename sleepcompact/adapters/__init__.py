"""Adapters: the tokenizer, summarizers, redaction (implementations of the service ports)."""
