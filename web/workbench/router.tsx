/**
 * The page's addresses and how a view goes to another: a module of its own so that the views and
 * main.tsx both import it and neither imports the other (main.tsx imports the views).
 */
import type { ComponentChildren } from 'preact';
import type { JobsView, SessionView } from '../../src/workbench/api.ts';

/** Every view's address, its name in the steps' list and its page title, in the order of a migration. */
export const ROUTES = [
  { href: '/files', label: 'Files', title: 'Files' },
  { href: '/map', label: 'Map', title: 'Map' },
  { href: '/check', label: 'Check', title: 'Check' },
  { href: '/run', label: 'Run', title: 'Run' },
  { href: '/verify', label: 'Verify', title: 'Verify' },
  { href: '/undo', label: 'Undo', title: 'Undo' },
] as const;

export type RouteInfo = (typeof ROUTES)[number];
export type Route = RouteInfo['href'];

/** The view an address shows: `/` and an unknown address show Files. */
export function routeOf(path: string): RouteInfo {
  return ROUTES.find((route) => route.href === path) ?? ROUTES[0];
}

export interface ViewProps {
  session: SessionView;
  jobs: JobsView;
  /** Goes to another view (its address); it may ask first, when the view has unsaved work. */
  go: (href: string) => void;
  /** Shows an error above the view; null clears it. */
  fail: (error: unknown) => void;
  /** The query of the address (`input` for the Map view). */
  query: URLSearchParams;
  /** Reloads the session (the plan exists once a mapping is saved). */
  refresh: () => void;
  /**
   * Tells the page whether the view holds work a change of view would lose (the Map view's
   * unsaved mapping): the page then asks before leaving it.
   */
  holdsWork: (unsaved: boolean) => void;
}

/** A link to a view, followed without reloading the page. */
export function Link(props: {
  href: string;
  go: (href: string) => void;
  children: ComponentChildren;
  current?: boolean;
}) {
  return (
    <a
      href={props.href}
      aria-current={props.current ? 'page' : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        props.go(props.href);
      }}
    >
      {props.children}
    </a>
  );
}
