import {
  boolYaml11Tag,
  defineScalarTag,
  floatYaml11Tag,
  intYaml11Tag,
  NOT_RESOLVED,
  realMapTag,
  type ScalarTagDefinition,
  Schema,
  timestampTag,
  YAML11_SCHEMA,
} from "js-yaml";

/**
 * A non-string YAML scalar with its source text. The reference (gopkg.in/yaml.v2) stores a scalar's text
 * in string fields (`value: yes` is the string `yes`, `value: 010` is `010`) and its typed value elsewhere,
 * and rejects floats in rule files; keeping both lets ratelimitd do the same.
 */
export class YamlScalar {
  constructor(
    readonly kind: "int" | "float" | "bool",
    readonly value: number | boolean,
    readonly text: string,
  ) {}
}

function marked(kind: YamlScalar["kind"], base: ScalarTagDefinition<number> | ScalarTagDefinition<boolean>) {
  return defineScalarTag(base.tagName, {
    implicit: true,
    implicitFirstChars: base.implicitFirstChars,
    resolve: (source, isExplicit, tagName) => {
      const value = base.resolve(source, isExplicit, tagName);
      return value === NOT_RESOLVED ? NOT_RESOLVED : new YamlScalar(kind, value, source);
    },
    identify: () => false,
  });
}

/**
 * YAML 1.1 as yaml.v2 reads it: `yes`/`on` are booleans, mapping keys keep their types (so `0.25: x` can be
 * reported as a non-string key), numbers and booleans keep their text, and timestamps stay strings (yaml.v2
 * hands timestamp-looking values to untyped fields as text).
 */
export const RULE_YAML_SCHEMA = new Schema(
  YAML11_SCHEMA.withTags(
    realMapTag,
    marked("int", intYaml11Tag),
    marked("float", floatYaml11Tag),
    marked("bool", boolYaml11Tag),
  ).tags.filter((tag) => tag.tagName !== timestampTag.tagName),
);
