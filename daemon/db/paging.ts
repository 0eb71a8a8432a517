// One way to answer a paged list (spec §8: `?page=&limit=` → `{ data, meta: { page, limit, total,
// totalPages } }`) from a Sequelize model, so no list computes its window or meta by hand.
import type { Attributes, FindOptions, Model, ModelStatic } from 'sequelize';
import type { PageOf, PageQuery } from '../../shared/schemas/common.ts';

export const DEFAULT_PAGE_LIMIT = 20;

export type Page<T> = PageOf<T>;

/** The page and limit a query asks for (the route's schema bounds them), and the OFFSET they mean. */
export function pageWindow(query: PageQuery): { page: number; limit: number; offset: number } {
  const page = query.page ?? 1;
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  return { page, limit, offset: (page - 1) * limit };
}

export function pageOf<T>(data: T[], window: { page: number; limit: number }, total: number): Page<T> {
  return { data, meta: { page: window.page, limit: window.limit, total, totalPages: Math.ceil(total / window.limit) } };
}

/** One page of `model` rows matching `options` (which must order them), turned into answer items. */
export async function findPage<M extends Model, T>(
  model: ModelStatic<M>,
  options: Omit<FindOptions<Attributes<M>>, 'limit' | 'offset'>,
  query: PageQuery,
  toItems: (rows: M[]) => T[] | Promise<T[]>,
): Promise<Page<T>> {
  const window = pageWindow(query);
  const { rows, count } = await model.findAndCountAll({ ...options, limit: window.limit, offset: window.offset });
  return pageOf(await toItems(rows), window, count);
}
