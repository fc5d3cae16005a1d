//! The tolerant JSON parser: repairs what LLMs get wrong, and lists each repair.
