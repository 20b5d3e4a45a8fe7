"""Helpers the tests share (servers, project factories, generators the tests check)."""
