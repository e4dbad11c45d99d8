"""The beat process: the nightly and idle sweeps (the sleep pipeline builds on this)."""
