"""Tests of factdebate.datasets: records, the catalog, the shipped sets, the releases."""
