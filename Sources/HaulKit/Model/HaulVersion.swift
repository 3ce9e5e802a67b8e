/// Haul's version.
public enum HaulVersion {
    public static let current = "0.1.0"
}
