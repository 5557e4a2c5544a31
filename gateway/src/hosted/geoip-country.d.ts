// geoip-country ships no types; this is the part the hosted forms use.
declare module "geoip-country" {
  interface GeoIpCountry {
    /** ISO 3166-1 alpha-2 code, e.g. "US". */
    country: string;
    name?: string;
  }
  const geoip: { lookup(ip: string): GeoIpCountry | null };
  export default geoip;
}
