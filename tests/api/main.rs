//! Library API tests.
