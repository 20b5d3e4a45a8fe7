"""``lakewide plan``, the preview of a run without a JVM: what a run of the project as it is
now would do per model, the columns before and after and the readers they break, the fixes
for what a run would refuse, and the JSON and Markdown reports.

Imports ``run.schema`` (the schema steps a run would take); no other run folder imports it."""
