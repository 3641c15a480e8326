// Schemas as plain data: each attribute's type (cty type JSON), mode and description. The same
// definitions feed GetProviderSchema and the resources' own handling of defaults and nulls.
export type CtyType =
  | "string"
  | "number"
  | "bool"
  | ["list" | "map" | "set", CtyType]
  | ["object", Record<string, CtyType>];

export type Mode = "required" | "optional" | "computed" | "optional_computed";

export interface Attribute {
  type?: CtyType;
  /** A list of objects described attribute by attribute (protocol 6 nested attributes). */
  nestedList?: Record<string, Attribute>;
  mode: Mode;
  sensitive?: boolean;
  description: string;
}

export interface ResourceSchema {
  version: number;
  description: string;
  attributes: Record<string, Attribute>;
}

type ProtoAttribute = Record<string, unknown>;

function protoAttribute(name: string, attribute: Attribute): ProtoAttribute {
  const modes = {
    required: attribute.mode === "required",
    optional: attribute.mode === "optional" || attribute.mode === "optional_computed",
    computed: attribute.mode === "computed" || attribute.mode === "optional_computed",
  };
  const base = {
    name,
    description: attribute.description,
    sensitive: attribute.sensitive ?? false,
    ...modes,
  };
  if (attribute.nestedList) {
    return {
      ...base,
      nested_type: {
        nesting: "LIST",
        attributes: Object.entries(attribute.nestedList).map(([key, value]) => protoAttribute(key, value)),
      },
    };
  }
  return { ...base, type: Buffer.from(JSON.stringify(attribute.type)) };
}

export function protoSchema(schema: ResourceSchema) {
  return {
    version: schema.version,
    block: {
      version: schema.version,
      description: schema.description,
      attributes: Object.entries(schema.attributes).map(([name, attribute]) =>
        protoAttribute(name, attribute),
      ),
    },
  };
}
