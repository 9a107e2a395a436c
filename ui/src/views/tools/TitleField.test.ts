import { describe, expect, it } from "vitest";
import { itemTitle } from "./TitleField";

describe("itemTitle", () => {
  it("names an untitled array item by its array and number", () => {
    expect(itemTitle("services-1", "root_services_0__title")).toBe("services, item 1");
    expect(itemTitle("services-12", "root_services_11__title")).toBe("services, item 12");
  });

  it("leaves other titles alone", () => {
    expect(itemTitle("At a time", "root_start__title")).toBeNull();
    expect(itemTitle("window-2", "root_window__title")).toBeNull();
  });
});
