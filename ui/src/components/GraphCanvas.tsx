import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type KeyboardEvent,
  type ReactNode,
} from "react";
import { Icon } from "./Icon";

interface View {
  x: number;
  y: number;
  zoom: number;
}

const MIN_ZOOM = 0.2;
const MAX_ZOOM = 2;
/** The zoom a fitted view keeps to: text stays readable (about 11 px and up) on a narrow pane. */
const FIT_MIN = 0.8;
const FIT_MAX = 1;
const PAD = 24;
const STEP = 1.25;
/** A press that moves less than this is a click on what is under it, not a pan. */
const CLICK_SLOP = 4;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

interface Size {
  w: number;
  h: number;
}

/** The view that shows a `width` × `height` drawing best in a pane of `size`. */
function fit(size: Size, width: number, height: number): View {
  const zoom = clamp(
    Math.min((size.w - 2 * PAD) / width, (size.h - 2 * PAD) / height),
    FIT_MIN,
    FIT_MAX,
  );
  const tall = height * zoom > size.h - 2 * PAD;
  return { zoom, x: (size.w - width * zoom) / 2, y: tall ? PAD : (size.h - height * zoom) / 2 };
}

/**
 * A large drawing (`width` × `height` pixels) in a pane that pans and zooms: drag or arrow keys
 * pan, the wheel or + and − zoom about the pointer or the centre, 0 fits it again. It opens
 * fitted: centred across, and from the top when it is taller than the pane (where a runbook
 * starts), never shrunk below `FIT_MIN`. Until someone moves it, it refits when the pane changes
 * size.
 */
export function GraphCanvas({
  width,
  height,
  label,
  children,
}: {
  width: number;
  height: number;
  /** The pane's accessible name (its keys are in its description). */
  label: string;
  children: ReactNode;
}) {
  const pane = useRef<HTMLDivElement>(null);
  // The pane's size (from its ResizeObserver) and where someone moved the view; until they
  // move it, the view is the fitted one, so it refits when the pane changes size.
  const [frame, setFrame] = useState<{ size: Size | null; moved: View | null }>({
    size: null,
    moved: null,
  });
  const view = frame.moved ?? (frame.size && fit(frame.size, width, height));
  const drag = useRef<{ x: number; y: number; from: View; far: boolean } | null>(null);
  const [panning, setPanning] = useState(false);
  /** The click that ends a drag: swallowed, so no step opens by accident. */
  const swallow = useRef(false);

  useLayoutEffect(() => {
    const el = pane.current;
    if (!el) return;
    const observer = new ResizeObserver(() => {
      setFrame((p) => ({ ...p, size: { w: el.clientWidth, h: el.clientHeight } }));
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
    };
  }, []);

  /** Move the view with `change`, from where it is now (fitted or moved). */
  const move = useCallback(
    (change: (v: View, size: Size) => View) => {
      setFrame((p) => {
        if (!p.size) return p;
        return { ...p, moved: change(p.moved ?? fit(p.size, width, height), p.size) };
      });
    },
    [width, height],
  );

  /** Zoom by `factor` keeping the pane point (px, py) where it is; the centre by default. */
  const zoomBy = useCallback(
    (factor: number, px?: number, py?: number) => {
      move((v, size) => {
        const cx = px ?? size.w / 2;
        const cy = py ?? size.h / 2;
        const zoom = clamp(v.zoom * factor, MIN_ZOOM, MAX_ZOOM);
        const k = zoom / v.zoom;
        return { zoom, x: cx - (cx - v.x) * k, y: cy - (cy - v.y) * k };
      });
    },
    [move],
  );

  const panBy = (dx: number, dy: number) => {
    move((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));
  };
  const refit = () => {
    setFrame((p) => ({ ...p, moved: null }));
  };

  // The wheel zooms the drawing, not the page: a passive listener could not keep the page still.
  useEffect(() => {
    const el = pane.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const box = el.getBoundingClientRect();
      // Lines (Firefox's wheel) or pages, as pixels.
      const pixels = e.deltaY * (e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? el.clientHeight : 1);
      zoomBy(Math.exp(-pixels * 0.002), e.clientX - box.left, e.clientY - box.top);
    };
    el.addEventListener("wheel", onWheel, { passive: false });
    return () => {
      el.removeEventListener("wheel", onWheel);
    };
  }, [zoomBy]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.target !== e.currentTarget || e.altKey || e.ctrlKey || e.metaKey) return;
    const step = e.shiftKey ? 200 : 60;
    const keys: Record<string, () => void> = {
      ArrowLeft: () => {
        panBy(step, 0);
      },
      ArrowRight: () => {
        panBy(-step, 0);
      },
      ArrowUp: () => {
        panBy(0, step);
      },
      ArrowDown: () => {
        panBy(0, -step);
      },
      "+": () => {
        zoomBy(STEP);
      },
      "=": () => {
        zoomBy(STEP);
      },
      "-": () => {
        zoomBy(1 / STEP);
      },
      "0": refit,
    };
    const act = keys[e.key];
    if (act) {
      e.preventDefault();
      act();
    }
  };

  return (
    <div
      ref={pane}
      className={`graph-canvas${panning ? " panning" : ""}`}
      role="group"
      aria-label={label}
      aria-description="Drag or arrow keys to pan, wheel or + and − to zoom, 0 to fit"
      tabIndex={0}
      onKeyDown={onKeyDown}
      style={
        view
          ? {
              backgroundPosition: `${view.x}px ${view.y}px`,
              backgroundSize: `${24 * view.zoom}px ${24 * view.zoom}px`,
            }
          : undefined
      }
      onPointerDown={(e) => {
        swallow.current = false;
        if (e.button !== 0 || !view) return;
        drag.current = { x: e.clientX, y: e.clientY, from: view, far: false };
      }}
      onPointerMove={(e) => {
        const d = drag.current;
        if (!d) return;
        const dx = e.clientX - d.x;
        const dy = e.clientY - d.y;
        if (!d.far && Math.hypot(dx, dy) < CLICK_SLOP) return;
        if (!d.far) {
          d.far = true;
          setPanning(true);
          e.currentTarget.setPointerCapture(e.pointerId);
        }
        move(() => ({ ...d.from, x: d.from.x + dx, y: d.from.y + dy }));
      }}
      onPointerUp={() => {
        swallow.current = drag.current?.far ?? false;
        drag.current = null;
        setPanning(false);
      }}
      onPointerCancel={() => {
        drag.current = null;
        setPanning(false);
      }}
      onClickCapture={(e) => {
        if (!swallow.current) return;
        swallow.current = false;
        e.stopPropagation();
        e.preventDefault();
      }}
    >
      {view && (
        <div
          className="graph-content"
          style={{
            width,
            height,
            transform: `translate(${view.x}px, ${view.y}px) scale(${view.zoom})`,
          }}
        >
          {children}
        </div>
      )}
      <div className="graph-controls">
        <button
          type="button"
          aria-label="Zoom in"
          title="Zoom in (+)"
          onClick={() => {
            zoomBy(STEP);
          }}
        >
          <Icon name="plus" size={14} />
        </button>
        <button
          type="button"
          aria-label="Zoom out"
          title="Zoom out (−)"
          onClick={() => {
            zoomBy(1 / STEP);
          }}
        >
          <Icon name="minus" size={14} />
        </button>
        <button type="button" aria-label="Fit to the pane" title="Fit (0)" onClick={refit}>
          <Icon name="fit" size={14} />
        </button>
      </div>
    </div>
  );
}
