// Zod interop: a Zod 4 schema is accepted anywhere a JSON Schema is. It is
// recognised by duck typing (Zod 4 schemas carry a `_zod` record; Zod is an
// optional peer dependency, never imported or bundled here) and converted
// with Zod's own JSON Schema conversion, `schema.toJSONSchema()`, the
// method form of `z.toJSONSchema(schema)`.
//
// Note [Zod's input, not its output]: converted for `io: "input"`, what
// Zod's parse takes, as the AI SDK converts it: agentshape judges what a
// model wrote, which Zod then parses. Zod's default, the output, is what
// the parse returns: a field with a `.default()` was required there (the
// model may leave it out), a `.transform()` could not be converted at all,
// and every object was closed (`additionalProperties: false`) where
// Zod's parse strips unknown keys (a `z.strictObject` is closed either
// way).

import { SchemaError } from "./errors.js";

/** Whether `schema` is a Zod schema (4, or an older one to refuse clearly). */
export function isZod(schema) {
  return (
    schema !== null &&
    typeof schema === "object" &&
    (typeof schema._zod === "object" || (typeof schema._def === "object" && typeof schema.safeParse === "function"))
  );
}

/**
 * The JSON Schema of a Zod schema, by Zod's own conversion of its input
 * (Note [Zod's input, not its output]); `target` a draft Zod writes for.
 */
export function zodToJSONSchema(schema, target) {
  if (typeof schema._zod !== "object") {
    throw new SchemaError("a Zod 3 schema: agentshape converts Zod 4 schemas (zod@^4) with Zod's own toJSONSchema");
  }
  if (typeof schema.toJSONSchema !== "function") {
    throw new SchemaError(
      "this Zod schema has no toJSONSchema() method (Zod 4 mini, or an early 4.x): pass z.toJSONSchema(schema) instead",
    );
  }
  try {
    return schema.toJSONSchema(target === undefined ? { io: "input" } : { io: "input", target });
  } catch (e) {
    // Zod refuses types JSON Schema cannot say (z.bigint(), z.date(), transforms...).
    throw new SchemaError(`Zod could not convert the schema to JSON Schema: ${e.message}`, { cause: e });
  }
}

/**
 * `schema` with every object schema in it closed (`additionalProperties:
 * false` where it is not a schema), as the AI SDK sends a Zod schema to a
 * provider (OpenAI's strict mode refuses an object that is not closed):
 * for `agentshapeOutput`'s request, never for validation. Mutates and
 * returns `schema`, a fresh conversion.
 */
export function closedObjects(schema) {
  if (schema === null || typeof schema !== "object") return schema;
  const type = schema.type;
  if (type === "object" || (Array.isArray(type) && type.includes("object"))) {
    const extra = schema.additionalProperties;
    schema.additionalProperties = extra != null && typeof extra !== "boolean" ? closedObjects(extra) : false;
    for (const key of Object.keys(schema.properties ?? {})) closedObjects(schema.properties[key]);
  }
  if (Array.isArray(schema.items)) schema.items.forEach(closedObjects);
  else closedObjects(schema.items);
  for (const list of ["anyOf", "allOf", "oneOf"]) if (Array.isArray(schema[list])) schema[list].forEach(closedObjects);
  for (const defs of ["definitions", "$defs"]) for (const key of Object.keys(schema[defs] ?? {})) closedObjects(schema[defs][key]);
  return schema;
}
