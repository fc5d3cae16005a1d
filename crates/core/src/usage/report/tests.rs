//! Tests of the usage reports.
