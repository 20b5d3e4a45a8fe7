"""A model's config: keys, merge engines, aggregate specs, snapshots, maintenance."""
