"""Hand-history exports in the formats trackers and solvers import, always from a reader's view."""
