/**
 * Pagination as the platform does it: `page[number]` and `page[size]` (default 20, at most 100), top-level
 * `links` and `meta.pagination`. A page past the end is empty but keeps the totals.
 */
import type { ListLinks, Pagination } from '../terraform/api.js';

/** One page of a list, with its links and pagination meta. */
export interface Page<T> {
  items: T[];
  links: ListLinks;
  pagination: Pagination;
}

function positiveInt(value: string | null, fallback: number): number {
  if (value === null || !/^\d+$/.test(value)) return fallback;
  const n = Number(value);
  return n >= 1 ? n : fallback;
}

/**
 * Cuts one page out of `all`. `linkBase` is the list URL without page parameters (absolute for `/api/v2`,
 * relative for the GPG key endpoints, as in the documented samples); `extraQuery` keeps filters in the links.
 */
export function paginate<T>(
  all: T[],
  query: URLSearchParams,
  linkBase: string,
  extraQuery: URLSearchParams = new URLSearchParams(),
  options: { withSelf?: boolean } = {},
): Page<T> {
  const defaultSize = 20;
  const size = Math.min(positiveInt(query.get('page[size]'), defaultSize), 100);
  const number = positiveInt(query.get('page[number]'), 1);
  const totalCount = all.length;
  const totalPages = Math.ceil(totalCount / size);
  const items = all.slice((number - 1) * size, number * size);
  const link = (n: number): string => {
    const q = new URLSearchParams(extraQuery);
    q.set('page[number]', String(n));
    q.set('page[size]', String(size));
    return `${linkBase}?${q.toString()}`;
  };
  const prevPage = number > 1 ? number - 1 : null;
  const nextPage = number < totalPages ? number + 1 : null;
  return {
    items,
    links: {
      ...(options.withSelf === false ? {} : { self: link(number) }),
      first: link(1),
      prev: prevPage === null ? null : link(prevPage),
      next: nextPage === null ? null : link(nextPage),
      last: link(Math.max(totalPages, 1)),
    },
    pagination: {
      'current-page': number,
      'page-size': size,
      'prev-page': prevPage,
      'next-page': nextPage,
      'total-pages': totalPages,
      'total-count': totalCount,
    },
  };
}
