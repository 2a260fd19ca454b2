"""One local Spark session for the Spark tests (``local[2]``, as on a 2-core machine), with both sources
registered. Spark's workers start ``PYSPARK_PYTHON``; unset, they would start the system Python, which has
neither zkconsumer nor its dependencies, and fail to connect back: point it at this interpreter."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from support import SPARK_JAVA_OPTIONS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/spark/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark(tmp_path_factory) -> Iterator[object]:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # `make test` installs the extra; a missing install must not pass silently
        pytest.fail("PySpark is not installed: pip install -e '.[test,spark]' (scripts/bootstrap.sh does)")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    import zkconsumer.spark

    session = (
        SparkSession.builder.master("local[2]")
        .appName("zkconsumer-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .config("spark.local.dir", str(tmp_path_factory.mktemp("spark-local")))
        .config("spark.driver.defaultJavaOptions", SPARK_JAVA_OPTIONS)
        .config("spark.driver.extraJavaOptions", "-Dderby.system.home=" + str(tmp_path_factory.mktemp("derby")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    zkconsumer.spark.register(session)
    yield session
    session.stop()
