// The session page's live parts: filled in with the session page.
export {};
