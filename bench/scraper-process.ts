/** The scrapers' process (see `RemoteScrapers`): answers each order with the responses' lengths. */
import { httpGet } from './http-get';
import type { ScrapeOrder } from './remote-scrapers';

process.on('message', (order: ScrapeOrder) => {
  Promise.all(Array.from({ length: order.count }, () => httpGet(order.url, order.gzip))).then(
    (lengths) => process.send?.(lengths),
    (error: unknown) => process.send?.({ error: String(error) }),
  );
});
