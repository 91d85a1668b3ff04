import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { queries } from '../api/queries';
import { EventList } from './events';
import { ErrorMessage, Loading, Pager } from './ui';

const PAGE_SIZE = 20;

/** A flag's events, newest first, paged with the total: the event log's view for one flag. */
export function FlagHistory({ flagName }: { flagName: string }) {
  const [offset, setOffset] = useState(0);
  const query = { feature: `IS:${flagName}`, offset: String(offset), limit: String(PAGE_SIZE) };
  const events = useQuery({ ...queries.events(query), placeholderData: (previous) => previous });
  if (events.error) return <ErrorMessage error={events.error} />;
  if (!events.data) return <Loading what="history" />;
  return (
    <div>
      <EventList events={events.data.events} />
      <Pager offset={offset} limit={PAGE_SIZE} total={events.data.total} onChange={setOffset} />
    </div>
  );
}
