// A DynamoDB number kept as its exact decimal text, for values a JavaScript
// number cannot hold exactly (more than ~15 significant digits, or beyond
// Number.MAX_SAFE_INTEGER). Shaped like @aws-sdk/util-dynamodb's NumberValue,
// whose instances dynaslice accepts too.
export class NumberValue {
  /** @param {string | number | bigint} value */
  constructor(value) {
    this.value = String(value);
  }

  toString() {
    return this.value;
  }

  toJSON() {
    return this.value;
  }
}
