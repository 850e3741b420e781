//! Library API tests.

mod path;
