//! Rosetta v1.4.6 models.
