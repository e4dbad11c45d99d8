"""Use cases. Each owns its transaction and talks to storage and LLMs only through ``ports``."""
