"""The repository's docs site sources; ``docs.gen`` generates its reference pages."""
