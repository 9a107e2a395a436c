import { lazy, type ComponentType, type ReactElement } from "react";

/** A view's module: its default export is the view. */
type ViewModule<P> = Promise<{ default: ComponentType<P> }>;

/** A view loaded on first use, with `preload` to start loading it early. */
export type LazyView<P> = ((props: P) => ReactElement) & { preload: () => ViewModule<P> };

/**
 * A view in a chunk of its own that, once loaded, renders without suspending.
 *
 * `React.lazy` alone suspends on its first render even when the chunk has arrived, and React
 * then keeps its fallback on screen for at least 300 ms (its throttle against flicker): the
 * view the app opens on would wait for that. Preloaded before the first render (`main.tsx`),
 * the view renders at once; shown before it loads, it suspends as `lazy` does.
 */
export function lazyView<P extends object>(load: () => ViewModule<P>): LazyView<P> {
  let loaded: ComponentType<P> | undefined;
  let pending: ViewModule<P> | undefined;
  const preload = () =>
    (pending ??= load().then((module) => {
      loaded = module.default;
      return module;
    }));
  const Lazy = lazy(preload);
  function View(props: P): ReactElement {
    const Loaded = loaded;
    return Loaded ? <Loaded {...props} /> : <Lazy {...props} />;
  }
  return Object.assign(View, { preload });
}
