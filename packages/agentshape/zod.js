// Zod interop: a Zod 4 schema is accepted anywhere a JSON Schema is. It is
// recognised by duck typing (Zod 4 schemas carry a `_zod` record; Zod is an
// optional peer dependency, never imported or bundled here) and converted
// with Zod's own JSON Schema conversion, `schema.toJSONSchema()`, the
// method form of `z.toJSONSchema(schema)`.

import { SchemaError } from "./errors.js";

/** Whether `schema` is a Zod schema (4, or an older one to refuse clearly). */
export function isZod(schema) {
  return (
    schema !== null &&
    typeof schema === "object" &&
    (typeof schema._zod === "object" || (typeof schema._def === "object" && typeof schema.safeParse === "function"))
  );
}

/** The JSON Schema of a Zod schema, by Zod's own conversion. */
export function zodToJSONSchema(schema) {
  if (typeof schema._zod !== "object") {
    throw new SchemaError("a Zod 3 schema: agentshape converts Zod 4 schemas (zod@^4) with Zod's own toJSONSchema");
  }
  if (typeof schema.toJSONSchema !== "function") {
    throw new SchemaError(
      "this Zod schema has no toJSONSchema() method (Zod 4 mini, or an early 4.x): pass z.toJSONSchema(schema) instead",
    );
  }
  try {
    return schema.toJSONSchema();
  } catch (e) {
    // Zod refuses types JSON Schema cannot say (z.bigint(), z.date(), transforms...).
    throw new SchemaError(`Zod could not convert the schema to JSON Schema: ${e.message}`, { cause: e });
  }
}
