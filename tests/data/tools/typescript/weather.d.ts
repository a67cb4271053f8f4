// Ambient declarations of a weather service's tools.
/// <reference types="node" />

/**
 * Get the current weather for a city.
 *
 * The second paragraph is not part of the description.
 * @param city The city's name, e.g. "Paris".
 * @param {string} unit - The temperature unit.
 * @param [days] How many days of forecast.
 * @returns The weather report.
 */
declare function get_weather(city: string, unit: "celsius" | "fahrenheit", days?: number): Promise<string>;

/** Convert an amount between two currencies. */
export declare function convert_currency(
  amount: number,
  /** ISO 4217 code of the source currency */
  from: string,
  to: string,
  round: boolean,
): number

/**
 * Search flights.
 * @param {string} origin - Airport of departure.
 * @param [max_stops=1] At most this many stops.
 * @param cabin Cabin class.
 */
export declare function search_flights(origin: string, destination: string, max_stops: number,
                                       cabin?: "economy" | "business" | "first"): void;
export declare function list_tags(tags: string[], limit: number): string[];
