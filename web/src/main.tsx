// First: the opened page's script is asked for before the heavier modules below are evaluated.
import { PAGES, PageView, PUBLIC_PAGES } from './page-table';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { ApiError, whenSignedOut } from './api/errors';
import { Layout } from './components/layout';
import { Loading } from './components/ui';
import { NotFound } from './pages/not-found';
import { SignIn } from './pages/sign-in';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A missing page or a forbidden one does not get better by asking again.
      retry: (failures, error) => failures < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: true,
      staleTime: 5_000,
    },
  },
});

whenSignedOut(() => {
  // Pages for people who are not signed in: a 401 there is the page's own business.
  const { pathname } = window.location;
  if (pathname === '/login' || pathname === '/reset-password' || pathname.startsWith('/invite/')) return;
  queryClient.clear();
  const next = window.location.pathname + window.location.search;
  window.location.assign(`/login?next=${encodeURIComponent(next)}`);
});

const theme = localStorage.getItem('vexil-theme');
if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <Suspense fallback={<Loading what="the page" />}>
          <Routes>
            <Route path="/login" element={<SignIn />} />
            {PUBLIC_PAGES.map(([path, page]) => (
              <Route key={path} path={path} element={<PageView page={page} />} />
            ))}
            <Route element={<Layout />}>
              <Route index element={<Navigate to="/flags" replace />} />
              {PAGES.map(([path, page]) => (
                <Route key={path} path={path} element={<PageView page={page} />} />
              ))}
              <Route path="*" element={<NotFound />} />
            </Route>
          </Routes>
        </Suspense>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
