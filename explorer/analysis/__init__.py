"""Analyses of a model and its runs: the pages' views, gradients, the seeds' equivalence checks, and the
statistics behind a verdict."""
