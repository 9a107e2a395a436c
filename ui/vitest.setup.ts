import "@testing-library/jest-dom/vitest";
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

afterEach(() => {
  cleanup();
});

// jsdom lays nothing out; the virtualized lists need a viewport to fill.
class ResizeObserverStub {
  observe() {}
  unobserve() {}
  disconnect() {}
}
// jsdom has no ResizeObserver.
globalThis.ResizeObserver = ResizeObserverStub;
Object.defineProperty(HTMLElement.prototype, "offsetHeight", {
  configurable: true,
  get: () => 800,
});
Object.defineProperty(HTMLElement.prototype, "offsetWidth", {
  configurable: true,
  get: () => 1000,
});
HTMLElement.prototype.getBoundingClientRect = function () {
  return {
    x: 0,
    y: 0,
    top: 0,
    left: 0,
    bottom: 800,
    right: 1000,
    width: 1000,
    height: 800,
    toJSON: () => ({}),
  };
};
HTMLElement.prototype.scrollTo = () => {};
for (const [name, value] of [
  ["clientHeight", 800],
  ["clientWidth", 1000],
] as const) {
  Object.defineProperty(HTMLElement.prototype, name, { configurable: true, get: () => value });
}
// jsdom does not scroll.
Element.prototype.scrollIntoView = function scrollIntoView() {};
