"""The peers' jars (Delta Lake, Apache Paimon) from Maven Central, kept out of lakewide.

    python benchmarks/peer_jars.py      # fetch them into ~/.m2 (what .ci/run does) and list them

Each jar is fetched once with ``mvn -q dependency:get`` into the local Maven repository; the
benchmark puts them on its Spark session's ``spark.jars`` next to lakewide's own.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

# Delta 3.3.x is the line for Spark 3.5 (Scala 2.12). Paimon: 0.9.0 is the newest
# paimon-spark-3.5 runtime jar that resolves from the Maven repository reachable here (the 1.x
# names, paimon-spark-3.5 and paimon-spark-3.5_2.12, are not served by it).
JARS = {
    "delta": ["io.delta:delta-spark_2.12:3.3.2", "io.delta:delta-storage:3.3.2"],
    "paimon": ["org.apache.paimon:paimon-spark-3.5:0.9.0"],
}
REPOSITORY = Path.home() / ".m2" / "repository"


def jar_path(coordinate: str) -> Path:
    """Where ``group:artifact:version`` lies in the local Maven repository."""
    group, artifact, version = coordinate.split(":")
    return REPOSITORY.joinpath(*group.split("."), artifact, version, f"{artifact}-{version}.jar")


def peer_jars(peers: list[str] | None = None) -> list[Path]:
    """The jars of ``peers`` (all by default), fetched with Maven when not yet there."""
    paths = []
    for peer in peers if peers is not None else list(JARS):
        for coordinate in JARS[peer]:
            path = jar_path(coordinate)
            if not path.is_file():
                subprocess.run(
                    [
                        "mvn",
                        "-q",
                        "dependency:get",
                        "-Dtransitive=false",
                        f"-Dartifact={coordinate}",
                    ],
                    check=True,
                )
            paths.append(path)
    return paths


def versions() -> dict[str, str]:
    """Peer -> the versions of its jars."""
    return {peer: ", ".join(c.split(":", 1)[1] for c in coords) for peer, coords in JARS.items()}


if __name__ == "__main__":
    for jar in peer_jars():
        print(jar)
