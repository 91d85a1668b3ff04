import { Link } from 'react-router';

export function NotFound() {
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link to="/flags">Go to the flags</Link>.
      </p>
    </div>
  );
}
