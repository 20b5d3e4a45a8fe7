"""A key table's schema changes at run time: its stored contract against its model's, the
schema steps run before it writes, the check of every selected key table before a run, and
the contract's inputs kept so that a run need not analyse them again.

Imports no other run folder."""
