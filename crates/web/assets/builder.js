// The schema builder: filled in with the builder page.
export {};
