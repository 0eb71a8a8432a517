// Batch statements declared by names (issue 30). A statement that writes many rows at once passes
// each column as one array parameter and reads them back with `unnest` (graphile-worker's
// completeJobs / failJobs do the same). Numbered by hand, such a statement grows into dozens of
// positional parameters whose order is repeated in the caller; here the statement names its
// batches and their columns, the parameters are numbered as the text first refers to them, and the
// caller passes rows as objects. Adding a column is one entry in its column list and one use in the
// text, in the file that declares the statement.
//
// A column referred to by two parts of the statement (the events that are both recorded and fanned
// out) is one parameter: the text says `sql.unnest('events', 'e', [...names])` in both places.
import { declare, type Statement } from './sql.ts';

/** One column of a batch: its name (the key of each row object) and its element type in SQL. */
export interface BatchColumn {
  name: string;
  /** The element type: `uuid`, `text`, `int`, `bigint`, `boolean`, `timestamptz` … (the array is `type[]`). */
  type: string;
}

export type BatchColumns = readonly BatchColumn[];

/** What the statement's text is built with: references to named scalars and named batches. */
export interface BatchSql<B extends string, S extends string> {
  /** `$n` of a single value, cast to its declared type. */
  scalar(name: S): string;
  /** `$n::type[]` of one column of a batch (to write `= ANY(…)` and the like). */
  column(batch: B, name: string): string;
  /**
   * `unnest($a::ta[], $b::tb[], …) AS alias(a, b, …)` over the batch's columns, or over `names`
   * only (a part of the statement that reads a subset; the parameters are shared).
   */
  unnest(batch: B, alias: string, names?: readonly string[]): string;
}

export type BatchRow = Record<string, unknown>;

export interface BatchStatement<B extends string, S extends string> {
  statement: Statement;
  /** The positional values of the statement, from the scalars and each batch's rows (objects by column name). */
  values(input: { [K in S]: unknown } & { [K in B]: readonly BatchRow[] }): unknown[];
}

type Parameter = { kind: 'scalar'; name: string } | { kind: 'column'; batch: string; name: string };

/**
 * Declares a statement whose parameters are named scalars and batches of rows. `text` is called once,
 * here, to build the SQL; a parameter it never refers to is not part of the statement.
 */
export function declareBatch<B extends string, S extends string = never>(
  name: string,
  shape: { batches: Record<B, BatchColumns>; scalars?: Record<S, string> },
  text: (sql: BatchSql<B, S>) => string,
): BatchStatement<B, S> {
  const parameters: Parameter[] = [];
  const numbers = new Map<string, number>();
  const numberOf = (key: string, parameter: Parameter): number => {
    let number = numbers.get(key);
    if (number === undefined) {
      parameters.push(parameter);
      numbers.set(key, (number = parameters.length));
    }
    return number;
  };
  const columnOf = (batch: B, column: string): BatchColumn => {
    const found = shape.batches[batch]?.find((c) => c.name === column);
    if (!found) throw new Error(`declareBatch ${name}: batch ${batch} has no column ${column}`);
    return found;
  };
  const columnRef = (batch: B, column: string): string =>
    `$${numberOf(`${batch}.${column}`, { kind: 'column', batch, name: column })}::${columnOf(batch, column).type}[]`;
  const sql: BatchSql<B, S> = {
    scalar(scalar) {
      const type = shape.scalars?.[scalar];
      if (!type) throw new Error(`declareBatch ${name}: no scalar ${scalar}`);
      return `$${numberOf(`:${scalar}`, { kind: 'scalar', name: scalar })}::${type}`;
    },
    column: columnRef,
    unnest(batch, alias, names) {
      const columns = names ?? shape.batches[batch].map((c) => c.name);
      return `unnest(${columns.map((c) => columnRef(batch, c)).join(', ')}) AS ${alias}(${columns.join(', ')})`;
    },
  };
  const statement = declare(name, text(sql));
  return {
    statement,
    values(input) {
      const given = input as Record<string, unknown>;
      return parameters.map((parameter) =>
        parameter.kind === 'scalar'
          ? (given[parameter.name] ?? null)
          : (given[parameter.batch] as readonly BatchRow[]).map((row) => row[parameter.name] ?? null),
      );
    },
  };
}
